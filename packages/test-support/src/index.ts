// Helpers shared by the test suites; each started thing is always stopped by its caller.

export * from './browser.js';
export * from './built-commit.js';
export * from './containers.js';
export * from './engines.js';
export * from './server.js';
export * from './spawn.js';
export * from './tools.js';
