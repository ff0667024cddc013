// How long a change takes to reach every running instance: the one bound the key cache (store/key-cache.ts),
// the ban cache (limits/ban-cache.ts) and the usage meter's writes (usage/meter.ts) share. Every text that
// promises it is built from it here, or checked against it by a test (src/bounds.test.ts): the contracts,
// the README, the docs.
export const propagationMs = 5_000;

/** The bound as the CLI, the contracts and the docs write it: "5 seconds". */
export const propagationText = `${propagationMs / 1000} seconds`;
