import { z } from 'zod';
import { text } from '../text.ts';
import { segmentIdPattern } from './segment-id.ts';

export const AddSegment = z.object({
  type: z.literal('AddSegment'),
  payload: z.object({
    segmentId: text('Segment id')
      .trim()
      .regex(segmentIdPattern, 'A segment id is 1–64 lowercase letters, digits or dashes.'),
    name: text('Name', { required: 'Name is required.' })
      .trim()
      .min(1, 'Name is required.')
      .max(60, 'Name must be at most 60 characters.'),
  }),
});
export type AddSegmentCommand = z.infer<typeof AddSegment>;

/** A fresh install's board. */
export const defaultSegments = [
  { segmentId: 'enterprise', name: 'Enterprise' },
  { segmentId: 'mid-market', name: 'Mid-market' },
  { segmentId: 'smb', name: 'SMB' },
  { segmentId: 'emerging', name: 'Emerging' },
] as const;
