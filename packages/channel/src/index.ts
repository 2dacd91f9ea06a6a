#!/usr/bin/env node
import { runStdioServer } from '@engage-mcp/shared';
import { channel } from './operations.js';

void runStdioServer(channel);
