// Prints how long `import(specifier)` takes in this fresh process, in ms. Plain JavaScript on
// purpose: a .ts worker would first load Node's TypeScript stripper, which is no part of what a
// user's `import 'integration-sdk'` costs. argv[2]: the specifier, resolved from the package root,
// or `fetch-globals`: the first `new Request(...)` with a stream body, as ky's feature detection
// does at import. It makes Node load its bundled undici, which is then billed to whoever touches
// fetch's classes first.
const specifier = process.argv[2];
const start = performance.now();
if (specifier === 'fetch-globals') {
  new Request('https://empty.invalid', { body: new ReadableStream(), method: 'POST', duplex: 'half' });
} else {
  await import(specifier);
}
const ms = performance.now() - start;
console.log(JSON.stringify({ specifier, ms }));
