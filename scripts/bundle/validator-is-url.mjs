// What durable-functions takes of validator: `isURL`, the only function its DurableClient.js and
// getClient.js call. The bundle resolves `validator` here (scripts/package-app.js), so it holds that
// function from the library's own module instead of all of validator's.
export { default as isURL } from 'validator/es/lib/isURL.js';
