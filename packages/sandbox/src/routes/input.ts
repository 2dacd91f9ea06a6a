// Checks of request bodies, shared by the domains: each failure is a 400 with a message that
// names the field.
import { bad } from '../failure.js';

const MSISDN = /^62\d{7,13}$/;
export const CHANNELS = ['whatsapp', 'telegram', 'email'];

/** body[field] as a non-empty string of at most `max` characters; undefined when absent and not required. */
export function str(body: Record<string, unknown>, field: string, required: boolean, max = 4096): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) {
    if (required) throw bad(`${field} is required`);
    return undefined;
  }
  if (typeof value !== 'string' || value.trim() === '') throw bad(`${field} must be a non-empty string`);
  if (value.length > max) throw bad(`${field} is too long`);
  return value;
}

export function checkMsisdn(value: string | undefined): void {
  if (value !== undefined && !MSISDN.test(value)) throw bad('msisdn must be 62 followed by digits (62xxxxxxxxxx)');
}

export function checkEmail(value: string | undefined): void {
  if (value !== undefined && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(value)) throw bad('email is not a valid address');
}

export function checkChannel(channel: string): void {
  if (!CHANNELS.includes(channel)) throw bad('channel must be whatsapp, telegram or email');
}
