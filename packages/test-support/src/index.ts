// Helpers shared by the test suites; each started thing is always stopped by its caller.

export * from './containers.js';
export * from './server.js';
export * from './spawn.js';
export * from './tools.js';
