#!/usr/bin/env node
import { runStdioServer } from '@engage-mcp/shared';
import { product } from './operations.js';

void runStdioServer(product);
