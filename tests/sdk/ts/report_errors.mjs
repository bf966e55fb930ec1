// Loaded by the tests before each program (`node --import`): an error that ends a program is printed
// as its message and stack only. Node would otherwise quote the source line it came from, which in the
// SDK's bundled sdk.mjs is a megabyte long, and the message behind it would be lost.
process.on("uncaughtException", (error) => {
  process.stderr.write(`${error?.stack ?? error}\n`, () => process.exit(1));
});
