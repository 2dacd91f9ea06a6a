#!/usr/bin/env node
import { runStdioServer } from '@engage-mcp/shared';
import { inbox } from './operations.js';

void runStdioServer(inbox);
