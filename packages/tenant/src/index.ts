#!/usr/bin/env node
import { runStdioServer } from '@engage-mcp/shared';
import { tenant } from './operations.js';

void runStdioServer(tenant);
