#!/usr/bin/env node
// The bin is this small file, present from checkout on, so `npm install` can link it before the
// build has made dist/cli.js (the command itself, bundled with no runtime dependency).
await import('../dist/cli.js');
