#!/usr/bin/env node
import { runStdioServer } from '@engage-mcp/shared';
import { campaign } from './operations.js';

void runStdioServer(campaign);
