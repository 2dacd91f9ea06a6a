// Draws bundles/icon.png (512×512): a speech bubble on a rounded teal square, the mark the MCP
// bundles show in Claude Desktop. Run once by hand (node bundles/make-icon.mjs); the PNG is
// committed. Plain zlib and a few lines of PNG framing, so no image library is needed.
import { writeFileSync } from 'node:fs';
import { deflateSync } from 'node:zlib';

const SIZE = 512;
const inRoundedRect = (x, y, left, top, right, bottom, radius) => {
  const cx = Math.min(Math.max(x, left + radius), right - radius);
  const cy = Math.min(Math.max(y, top + radius), bottom - radius);
  return x >= left && x <= right && y >= top && y <= bottom && (x - cx) ** 2 + (y - cy) ** 2 <= radius ** 2;
};
const inTriangle = (x, y) => y >= 330 && y <= 410 && x >= 170 && x <= 170 + (410 - y) * 0.9;

const rows = [];
for (let y = 0; y < SIZE; y++) {
  const row = [0]; // filter: none
  for (let x = 0; x < SIZE; x++) {
    let pixel = [0, 0, 0, 0];
    if (inRoundedRect(x, y, 16, 16, 496, 496, 96)) pixel = [13, 128, 128, 255];
    if (inRoundedRect(x, y, 104, 128, 408, 340, 56) || inTriangle(x, y)) pixel = [255, 255, 255, 255];
    for (const dotX of [184, 256, 328]) if ((x - dotX) ** 2 + (y - 234) ** 2 <= 22 ** 2) pixel = [13, 128, 128, 255];
    row.push(...pixel);
  }
  rows.push(Buffer.from(row));
}

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
const crc32 = (buffer) => {
  let c = 0xffffffff;
  for (const byte of buffer) c = crcTable[(c ^ byte) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
};
const chunk = (type, data) => {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
};
const header = Buffer.alloc(13);
header.writeUInt32BE(SIZE, 0);
header.writeUInt32BE(SIZE, 4);
header.set([8, 6, 0, 0, 0], 8); // 8-bit RGBA, no interlace

writeFileSync(
  new URL('icon.png', import.meta.url),
  Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.concat(rows), { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]),
);
