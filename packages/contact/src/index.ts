#!/usr/bin/env node
import { runStdioServer } from '@engage-mcp/shared';
import { contact } from './operations.js';

void runStdioServer(contact);
