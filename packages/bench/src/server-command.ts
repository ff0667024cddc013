// How the benches start the real server: the built tree's bin and Node's flags as `pnpm start` gives them,
// for this tree or an earlier one built beside it (`pnpm bench --against`).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root. */
export const root = fileURLToPath(new URL('../../../', import.meta.url));
/**
 * The server's entry in the tree at `tree`: its bin, as `pnpm start` and the image run it (what it does
 * before the service loads, Node's compile cache, is part of a start), its first line's flags given apart.
 */
export const entryOf = (tree: string) => join(tree, 'apps/server/bin/animal-store-server.js');
/** Node's flags for the server of the tree at `tree`, as its bin gives them on its first line. */
export const flagsOf = (tree: string) =>
  (readFileSync(entryOf(tree), 'utf8').split('\n')[0] ?? '')
    .split(/\s+/)
    .filter((word) => word.startsWith('--'));
export const serverEntry = entryOf(root);
export const serverFlags = flagsOf(root);
