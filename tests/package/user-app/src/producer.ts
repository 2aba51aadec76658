import { startProducer } from '@cairn/producer';

const producer = await startProducer({ port: Number(process.env.PORT ?? 3000) });
console.log(`producer ready at ${producer.url}`);
process.once('SIGTERM', () => void producer.close().then(() => process.exit(0)));
