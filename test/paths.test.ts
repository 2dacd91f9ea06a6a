// Path building and parameter validation: encoding, refusals, and ids that spell another route.
import { describe, expect, it } from 'vitest';
import { InputError, buildRequest, normalizeMsisdn, validateParams, type Operation } from '@engage-mcp/shared';
import { ALL_OPERATIONS, DOMAINS } from './helpers.js';

const op = (id: string) => ALL_OPERATIONS.find((candidate) => candidate.id === id) as Operation;
const build = (id: string, params: Record<string, unknown>) => {
  const operation = op(id);
  return buildRequest(operation, validateParams(operation, params), DOMAINS[id.split('.')[0]!]!.operations);
};

describe('msisdn', () => {
  it.each([
    ['6281234567890', '6281234567890'],
    ['081234567890', '6281234567890'],
    ['+62 812-3456-7890', '6281234567890'],
    ['(0812) 3456 7890', '6281234567890'],
    ['812.3456.7890', '6281234567890'],
  ])('normalises %s', (input, expected) => expect(normalizeMsisdn(input)).toBe(expected));

  it.each(['', '12345', '+1 415 555 0100', '62abc', '6212', '0812345678901234567', '62 812 ★'])('refuses %j', (input) => {
    expect(normalizeMsisdn(input)).toBeUndefined();
  });
});

describe('buildRequest', () => {
  it('fills and encodes path parameters and puts the rest in the body', () => {
    expect(build('inbox.ticket.reply', { ticketID: 'TCK-1001', message: 'Halo' })).toEqual({
      path: '/api/ai/v1/tickets/TCK-1001/reply',
      body: { message: 'Halo' },
    });
    expect(build('contact.create', { name: 'Budi', msisdn: '0812 3456 7890' })).toEqual({
      path: '/api/user/users',
      body: { name: 'Budi', msisdn: '6281234567890' },
    });
    expect(build('contact.delete', { id: 'abc' })).toEqual({ path: '/api/user/users/abc' });
  });

  it('refuses ids that spell another route of the domain', () => {
    expect(() => build('inbox.ticket.get', { ticketID: 'stats' })).toThrow(/inbox\.ticket\.stats/);
    for (const ticketID of ['Stats', 'STATS', 'sTaTs']) expect(() => build('inbox.ticket.get', { ticketID })).toThrow(/inbox\.ticket\.stats/);
    expect(() => build('contact.update', { id: 'Import', name: 'x' })).toThrow(/contact\.import/);
    expect(() => build('contact.update', { id: 'import', name: 'x' })).toThrow(/contact\.import/);
    expect(() => build('channel.get', { channelId: 'x' })).not.toThrow();
  });

  it.each(['', '.', '..', 'a/b', '../campaign', 'a?b', 'a#b', '%2e%2e', 'a b', ' a', 'a\r\nX-Evil: 1', 'a\u0000', 'a\u202e', 'x'.repeat(129)])(
    'refuses the id %j with an error naming the field',
    (id) => {
      expect(() => build('contact.delete', { id })).toThrow(InputError);
      expect(() => build('contact.delete', { id })).toThrow(/params\.id/);
    },
  );

  it('names the bad field and the expected shape', () => {
    expect(() => validateParams(op('contact.create'), { name: 'Budi', msisdn: '12' })).toThrow(
      /params\.msisdn is not a valid number.*Expected params \{name: full name; msisdn: phone number \(62…\); email\?: email address\}/,
    );
    expect(() => validateParams(op('contact.create'), { msisdn: '081234567890' })).toThrow(/params\.name is required/);
    expect(() => validateParams(op('contact.update'), { id: 'a', phone: '0812' })).toThrow(/params\.phone is not a field/);
    expect(() => validateParams(op('contact.update'), { id: 'a' })).toThrow(/at least one of name, msisdn, email/);
    expect(() => validateParams(op('campaign.create'), { name: 'x', message: 'y', channel: 'sms' })).toThrow(/whatsapp, telegram or email/);
    expect(() => validateParams(op('contact.import'), { users: [{ name: 'a', msisdn: '1' }] })).toThrow(/params\.users\.0\.msisdn/);
  });

  it('passes unknown fields through where the spec does not show the body', () => {
    expect(build('product.create', { name: 'Kopi', sku: 'K-1', price: 10 }).body).toEqual({ name: 'Kopi', sku: 'K-1', price: 10 });
    expect(build('channel.whatsapp.send', { msisdn: '0812 3456 7890', template: { name: 'order_update', namespace: 'n' } }).body).toEqual({
      msisdn: '6281234567890',
      template: { name: 'order_update', namespace: 'n' },
    });
  });
});
