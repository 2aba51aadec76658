/**
 * `npm run pack [-- <folder>]`: compiles Cairn's published packages and packs
 * each into a tarball (default folder: `packed/`), for an app to install
 * with `npm install <folder>/*.tgz` (see the README quickstart).
 */
import { packPackages } from './lib/pack-packages.js';

const destination = process.argv[2] ?? 'packed';
for (const tarball of await packPackages(destination)) console.log(tarball);
