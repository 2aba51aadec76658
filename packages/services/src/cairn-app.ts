/** The Cairn apps that run as processes. */
export type CairnApp = 'worker' | 'producer';
