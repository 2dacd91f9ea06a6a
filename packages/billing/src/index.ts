#!/usr/bin/env node
import { runStdioServer } from '@engage-mcp/shared';
import { billing } from './operations.js';

void runStdioServer(billing);
