import { checkEnvelopeShape, type BusEnvelope } from '../command-shape.ts';

/**
 * Command-stream entries as the Redis bus reads them: as Buffers (`callBuffer`), so only the two strings
 * a delivery needs are decoded, the id and the envelope's text. ioredis's string replies would decode every
 * element and copy every nested array first; for a batch of deliveries that is a sizeable part of the
 * worker's time per command.
 */
export type BufferEntry = [id: Buffer, fields: Buffer[]];

const ENVELOPE = Buffer.from('envelope');

/** The text of the entry's `envelope` field; field names sit at even positions. */
export function envelopeText(fields: readonly Buffer[]): string | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (ENVELOPE.equals(fields[i] as Buffer)) return (fields[i + 1] as Buffer).toString();
  }
  return undefined;
}

/** The envelope if the text holds one of the right shape; undefined for anything else. */
export function parseEnvelope(text: string | undefined): BusEnvelope | undefined {
  if (text === undefined) return undefined;
  try {
    return checkEnvelopeShape(JSON.parse(text));
  } catch {
    return undefined;
  }
}

/** Stream ids are ASCII. */
export const entryId = (id: Buffer): string => id.toString('latin1');
