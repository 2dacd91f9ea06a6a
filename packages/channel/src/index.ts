#!/usr/bin/env node
// The channel server over stdio. The catalog loads on the first tool call; listing uses the manifest.
import { runStdioServer } from '@engage-mcp/shared/runtime';
import manifest from 'engage:manifest';

void runStdioServer(manifest, () => import('./operations.js').then((module) => module.channel));
