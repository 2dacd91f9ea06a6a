// Seed data for the sandbox's two tenants: realistic, Indonesian, and the same on every start.
// Shapes the spec leaves "not shown" are our guesses (see the README's sandbox section).

export interface Contact {
  _id: string;
  name: string;
  msisdn: string;
  email?: string;
  tags: string[];
  createdAt: string;
}

export interface Campaign {
  _id: string;
  name: string;
  message: string;
  channel: 'whatsapp' | 'telegram' | 'email';
  status: 'draft' | 'sending' | 'completed' | 'cancelled';
  totalRecipients: number;
  sentCount: number;
  failedCount: number;
  openedCount: number;
  recipientIds: string[];
  createdAt: string;
  sentAt?: string;
  finishedAt?: string;
}

export interface Message {
  from: 'customer' | 'agent';
  text: string;
  at: string;
}

export interface Ticket {
  _id: string;
  ticketID: string;
  status: 'open' | 'pending' | 'closed';
  channel: string;
  customerName: string;
  msisdn: string;
  lastMessageAt: string;
  unread: number;
  messages: Message[];
}

export interface Channel {
  channelId: string;
  type: string;
  name: string;
  status: 'connected' | 'disconnected';
  connectedAt: string | null;
}

export interface Product {
  _id: string;
  name: string;
  description: string;
  price: number;
  currency: string;
  stock: number;
  images: string[];
  createdAt: string;
}

export interface Quota {
  total: number;
  used: number;
}

export interface TenantState {
  tenantId: string;
  name: string;
  contacts: Contact[];
  campaigns: Campaign[];
  tickets: Ticket[];
  channels: Channel[];
  templates: Array<{ name: string; language: string; category: string; status: string; body: string }>;
  products: Product[];
  /** Image files kept per product; deleting a product deletes these too. */
  images: Map<string, string[]>;
  payments: Array<{ orderID: string; amount: number; currency: string; status: string; method: string; plan: string; paidAt: string }>;
  subscription: { plan: string; status: string; startedAt: string; expiresAt: string; features: string[] };
  aiQuota: Quota;
  messageQuota: Quota;
  usage: Array<{ date: string; aiUsed: number; messagesSent: number }>;
  setting: { companyName: string; address: string; phone: string; email: string; workingHours: Array<{ day: string; open: string; close: string }> };
}

const FIRST = [
  'Budi',
  'Siti',
  'Agus',
  'Dewi',
  'Rudi',
  'Sri',
  'Andi',
  'Putri',
  'Eko',
  'Rina',
  'Joko',
  'Wulan',
  'Hendra',
  'Ayu',
  'Bayu',
  'Indah',
  'Dimas',
  'Lestari',
  'Fajar',
  'Nur',
];
const LAST = [
  'Santoso',
  'Rahayu',
  'Wijaya',
  'Lestari',
  'Hidayat',
  'Kusuma',
  'Pratama',
  'Saputra',
  'Wulandari',
  'Nugroho',
  'Setiawan',
  'Permata',
  'Hakim',
  'Siregar',
  'Nasution',
];
const TAGS = ['vip', 'reseller', 'jakarta', 'bandung', 'surabaya', 'new', 'repeat'];

/** A small deterministic generator (mulberry32), so every start seeds the same data; bench/chaos.ts draws from it too. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function objectId(rand: () => number): string {
  let id = '';
  for (let index = 0; index < 24; index++) id += Math.floor(rand() * 16).toString(16);
  return id;
}

const BASE_TIME = Date.parse('2026-09-01T08:00:00Z');
const day = (n: number) => new Date(BASE_TIME + n * 86_400_000).toISOString();

/** `count` generated contacts, appended to `contacts` (a loop, not a spread: 200,000 arguments overflow the stack). */
function makeContacts(count: number, rand: () => number, startIndex = 0, contacts: Contact[] = []): Contact[] {
  for (let index = 0; index < count; index++) {
    const first = FIRST[Math.floor(rand() * FIRST.length)] as string;
    const last = LAST[Math.floor(rand() * LAST.length)] as string;
    const number = 81_200_000_000 + Math.floor(rand() * 99_999_999) + startIndex + index;
    contacts.push({
      _id: objectId(rand),
      name: `${first} ${last}`,
      msisdn: `62${number}`,
      ...(rand() < 0.7 ? { email: `${first}.${last}${startIndex + index}@example.co.id`.toLowerCase() } : {}),
      tags: TAGS.filter(() => rand() < 0.2),
      createdAt: day(-Math.floor(rand() * 300)),
    });
  }
  return contacts;
}

/**
 * One tenant's data: A is "Toko Batik Sekar" (40 contacts, plus `extraContacts` and `extraTickets`),
 * B is "Kopi Nusantara" (15 contacts). The builders draw from one generator in a fixed order
 * (contacts, campaigns, tickets, products, usage), so every start seeds the same ids and numbers.
 */
export function seedTenant(kind: 'A' | 'B', extraContacts = 0, extraTickets = 0): TenantState {
  const rand = seededRandom(kind === 'A' ? 20260901 : 20260902);
  const name = kind === 'A' ? 'Toko Batik Sekar' : 'Kopi Nusantara';
  const contacts = makeContacts(kind === 'A' ? 40 : 15, rand);
  if (extraContacts > 0) makeContacts(extraContacts, rand, contacts.length, contacts);
  const campaigns = seedCampaigns(kind, contacts, rand);
  const tickets = seedTickets(kind, contacts, rand);
  if (extraTickets > 0) makeTickets(extraTickets, kind, contacts, tickets);
  const products = seedProducts(kind, rand);
  return {
    tenantId: kind === 'A' ? 'tnt_sekar' : 'tnt_nusantara',
    name,
    contacts,
    campaigns,
    tickets,
    channels: seedChannels(kind, name),
    templates: seedTemplates(),
    products,
    images: new Map(products.map((product) => [product._id, [...product.images]])),
    ...seedBilling(kind),
    usage: seedUsage(rand),
    setting: seedSetting(kind, name),
  };
}

type CampaignSeed = [title: string, message: string, channel: Campaign['channel'], status: Campaign['status'], recipients: Contact[], dayOffset: number];

/** A campaign as its status leaves it: a draft has sent nothing, a cancelled one half, the others all. */
function makeCampaign(rand: () => number, [title, message, channel, status, recipients, offset]: CampaignSeed): Campaign {
  const sent = status === 'draft' ? 0 : status === 'cancelled' ? Math.floor(recipients.length / 2) : recipients.length;
  return {
    _id: objectId(rand),
    name: title,
    message,
    channel,
    status,
    totalRecipients: recipients.length,
    sentCount: sent,
    failedCount: sent > 0 ? 1 : 0,
    openedCount: Math.floor(sent * 0.6),
    recipientIds: recipients.map((contact) => contact._id),
    createdAt: day(offset),
    ...(status !== 'draft' ? { sentAt: day(offset + 1), finishedAt: day(offset + 1) } : {}),
  };
}

function seedCampaigns(kind: 'A' | 'B', contacts: Contact[], rand: () => number): Campaign[] {
  const withEmail = contacts.filter((contact) => contact.email);
  const some = contacts.slice(0, 12);
  const seeds: CampaignSeed[] =
    kind === 'A'
      ? [
          ['Promo Batik Lebaran', 'Diskon 20% untuk semua batik tulis sampai akhir bulan!', 'whatsapp', 'completed', contacts.slice(0, 40), -60],
          ['Koleksi Baru Oktober', 'Koleksi batik baru sudah tiba. Kunjungi toko kami.', 'email', 'completed', withEmail, -30],
          ['Flash Sale 11.11', 'Flash sale 11.11: potongan hingga 50%.', 'telegram', 'cancelled', some, -10],
          ['Undangan Pameran Desember', 'Kami mengundang Anda ke pameran batik di Jakarta Convention Center.', 'whatsapp', 'draft', some, -2],
        ]
      : [
          ['Promo Kopi Gayo', 'Beli 2 gratis 1 untuk kopi Gayo.', 'whatsapp', 'completed', contacts, -20],
          ['Newsletter November', 'Cerita petani kopi bulan ini.', 'email', 'draft', withEmail, -1],
        ];
  return seeds.map((seed) => makeCampaign(rand, seed));
}

type TicketSeed = [contactIndex: number, status: Ticket['status'], channel: string, texts: Array<[Message['from'], string]>];

/** A ticket with the contact at contactIndex, its messages a day apart from five days ago; unread counts the customer's, unless closed. */
function makeTicket(kind: 'A' | 'B', contacts: Contact[], rand: () => number, [index, status, channel, texts]: TicketSeed): Ticket {
  const contact = contacts[index % contacts.length] as Contact;
  const messages = texts.map(([from, text], position) => ({ from, text, at: day(-5 + position) }));
  return {
    _id: objectId(rand),
    ticketID: `TCK-${kind === 'A' ? 1001 + index : 2001 + index}`,
    status,
    channel,
    customerName: contact.name,
    msisdn: contact.msisdn,
    lastMessageAt: messages[messages.length - 1]?.at ?? day(-5),
    unread: status === 'closed' ? 0 : texts.filter(([from]) => from === 'customer').length,
    messages,
  };
}

/** The same five conversations for both tenants, each with that tenant's contacts. */
const TICKET_SEEDS: TicketSeed[] = [
  [0, 'open', 'whatsapp', [['customer', 'Halo, apakah batik tulis motif parang masih tersedia ukuran L?']]],
  [
    1,
    'open',
    'whatsapp',
    [
      ['customer', 'Pesanan saya belum sampai, nomor resi JNE 1234567890.'],
      ['agent', 'Mohon maaf, kami cek dulu ya kak.'],
      ['customer', 'Sudah 5 hari kak.'],
    ],
  ],
  [
    2,
    'pending',
    'telegram',
    [
      ['customer', 'Bisa kirim ke Makassar?'],
      ['agent', 'Bisa kak, ongkir Rp 45.000.'],
    ],
  ],
  [
    3,
    'closed',
    'email',
    [
      ['customer', 'Terima kasih, barang sudah diterima.'],
      ['agent', 'Sama-sama, ditunggu pesanan berikutnya!'],
    ],
  ],
  [4, 'open', 'whatsapp', [['customer', 'Apakah ada diskon untuk pembelian grosir 50 potong?']]],
];

function seedTickets(kind: 'A' | 'B', contacts: Contact[], rand: () => number): Ticket[] {
  return TICKET_SEEDS.map((seed) => makeTicket(kind, contacts, rand, seed));
}

function seedProducts(kind: 'A' | 'B', rand: () => number): Product[] {
  const seeds: Array<[title: string, description: string, price: number, stock: number]> =
    kind === 'A'
      ? [
          ['Batik Tulis Parang', 'Batik tulis tangan motif parang, katun primisima.', 850_000, 12],
          ['Batik Cap Kawung', 'Batik cap motif kawung, 2 meter.', 275_000, 40],
          ['Kemeja Batik Mega Mendung', 'Kemeja pria lengan panjang.', 320_000, 25],
        ]
      : [
          ['Kopi Gayo 250g', 'Arabika Gayo, roasting medium.', 95_000, 100],
          ['Kopi Toraja 250g', 'Arabika Toraja, roasting dark.', 105_000, 60],
        ];
  return seeds.map(([title, description, price, stock], index) => ({
    _id: objectId(rand),
    name: title,
    description,
    price,
    currency: 'IDR',
    stock,
    images: [`https://cdn.example.co.id/products/${kind}${index}-1.jpg`, `https://cdn.example.co.id/products/${kind}${index}-2.jpg`],
    createdAt: day(-100 + index),
  }));
}

/** WhatsApp and Telegram connected for both; email connected for A only. */
function seedChannels(kind: 'A' | 'B', name: string): Channel[] {
  return [
    { channelId: `ch_${kind}_wa`, type: 'whatsapp', name: `${name} WhatsApp`, status: 'connected', connectedAt: day(-200) },
    { channelId: `ch_${kind}_tg`, type: 'telegram', name: `${name} Telegram`, status: 'connected', connectedAt: day(-150) },
    {
      channelId: `ch_${kind}_em`,
      type: 'email',
      name: `${name} Email`,
      status: kind === 'A' ? 'connected' : 'disconnected',
      connectedAt: kind === 'A' ? day(-180) : null,
    },
  ];
}

function seedTemplates(): TenantState['templates'] {
  return [
    { name: 'order_update', language: 'id', category: 'UTILITY', status: 'APPROVED', body: 'Halo {{1}}, pesanan {{2}} sedang dikirim.' },
    { name: 'promo_umum', language: 'id', category: 'MARKETING', status: 'APPROVED', body: 'Halo {{1}}, ada promo baru untuk Anda: {{2}}' },
  ];
}

/** Payments (the last one pending), the Business subscription, and AI and message quota. */
function seedBilling(kind: 'A' | 'B'): Pick<TenantState, 'payments' | 'subscription' | 'aiQuota' | 'messageQuota'> {
  return {
    payments: [
      { orderID: `ORD-${kind}-2026-0901`, amount: 1_500_000, currency: 'IDR', status: 'paid', method: 'bank_transfer', plan: 'Business', paidAt: day(0) },
      { orderID: `ORD-${kind}-2026-1001`, amount: 1_500_000, currency: 'IDR', status: 'paid', method: 'virtual_account', plan: 'Business', paidAt: day(30) },
      { orderID: `ORD-${kind}-2026-1101`, amount: 1_500_000, currency: 'IDR', status: 'pending', method: 'virtual_account', plan: 'Business', paidAt: day(61) },
    ],
    subscription: { plan: 'Business', status: 'active', startedAt: day(0), expiresAt: day(90), features: ['whatsapp', 'telegram', 'email', 'ai-assistant'] },
    aiQuota: { total: 10_000, used: 2_350 },
    messageQuota: { total: 5_000, used: 1_210 },
  };
}

/** Fourteen days of usage. */
function seedUsage(rand: () => number): TenantState['usage'] {
  return Array.from({ length: 14 }, (_, index) => ({
    date: day(70 + index).slice(0, 10),
    aiUsed: 100 + Math.floor(rand() * 80),
    messagesSent: 40 + Math.floor(rand() * 60),
  }));
}

function seedSetting(kind: 'A' | 'B', name: string): TenantState['setting'] {
  return {
    companyName: name,
    address: kind === 'A' ? 'Jl. Malioboro No. 52, Yogyakarta 55271' : 'Jl. Braga No. 10, Bandung 40111',
    phone: kind === 'A' ? '6274512345' : '6222765432',
    email: kind === 'A' ? 'halo@batiksekar.co.id' : 'halo@kopinusantara.co.id',
    workingHours: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'].map((weekday) => ({
      day: weekday,
      open: '09:00',
      close: weekday === 'Sat' ? '14:00' : '17:00',
    })),
  };
}

const TICKET_TEXTS: Array<[Message['from'], string]> = [
  ['customer', 'Halo, apakah barang ini masih tersedia?'],
  ['customer', 'Berapa ongkos kirim ke Surabaya?'],
  ['agent', 'Masih tersedia kak, silakan diorder.'],
  ['customer', 'Pesanan saya sudah dikirim belum?'],
  ['agent', 'Sudah kami kirim hari ini, resi menyusul.'],
  ['customer', 'Terima kasih!'],
];
const TICKET_STATUSES: Ticket['status'][] = ['open', 'pending', 'closed'];
const TICKET_CHANNELS = ['whatsapp', 'telegram', 'email'];

/**
 * `count` generated tickets appended to `tickets`, for size tests: their own generator, so the
 * rest of the seed stays as it is, and a loop, so any count seeds quickly.
 */
function makeTickets(count: number, kind: 'A' | 'B', contacts: Contact[], tickets: Ticket[] = []): Ticket[] {
  const rand = seededRandom(kind === 'A' ? 20261001 : 20261002);
  const base = kind === 'A' ? 100_001 : 200_001;
  for (let index = 0; index < count; index++) {
    const contact = contacts[Math.floor(rand() * contacts.length)] as Contact;
    const status = TICKET_STATUSES[Math.floor(rand() * TICKET_STATUSES.length)] as Ticket['status'];
    const first = Math.floor(rand() * TICKET_TEXTS.length);
    const length = 1 + Math.floor(rand() * 3);
    const start = -Math.floor(rand() * 60);
    const messages: Message[] = [];
    for (let position = 0; position < length; position++) {
      const [from, text] = TICKET_TEXTS[(first + position) % TICKET_TEXTS.length] as [Message['from'], string];
      messages.push({ from, text, at: day(start + position) });
    }
    tickets.push({
      _id: objectId(rand),
      ticketID: `TCK-${base + index}`,
      status,
      channel: TICKET_CHANNELS[Math.floor(rand() * TICKET_CHANNELS.length)] as string,
      customerName: contact.name,
      msisdn: contact.msisdn,
      lastMessageAt: (messages[messages.length - 1] as Message).at,
      unread: status === 'closed' ? 0 : messages.filter((message) => message.from === 'customer').length,
      messages,
    });
  }
  return tickets;
}
