import type { NewEvent } from '#events/envelope.ts';
import { noteColumns, threats } from '#events/competitor/fields.ts';
import { defaultSegments } from '#events/segment/commands.ts';

const prefixes = [
  'North',
  'Bright',
  'Blue',
  'Iron',
  'Silver',
  'Clear',
  'Swift',
  'Nova',
  'Apex',
  'Quantum',
  'Cedar',
  'Summit',
  'Harbor',
  'Vertex',
  'Lumen',
  'Atlas',
  'Orbit',
  'Pioneer',
  'Crest',
  'Echo',
  'Helix',
  'Kestrel',
  'Maple',
  'Polar',
  'Radiant',
  'Sable',
  'Terra',
  'Union',
  'Vivid',
  'Zephyr',
];
const cores = [
  'wind',
  'lane',
  'path',
  'stone',
  'field',
  'point',
  'bridge',
  'stack',
  'signal',
  'forge',
  'works',
  'scope',
  'grid',
  'pulse',
  'wave',
  'line',
  'loop',
  'metric',
  'sight',
  'base',
];
const suffixes = [
  'Analytics',
  'Labs',
  'Software',
  'Systems',
  'Insight',
  'Cloud',
  'Technologies',
  'AI',
  'Data',
  'Compete',
];
const cities = [
  'Seattle, USA',
  'Austin, USA',
  'Berlin, Germany',
  'London, UK',
  'Toronto, Canada',
  'Dublin, Ireland',
  'Paris, France',
  'Singapore',
  'Sydney, Australia',
  'Tel Aviv, Israel',
  'Bangalore, India',
  'São Paulo, Brazil',
];
const strengths = [
  'Strong brand with enterprise buyers.',
  'Fast onboarding and good templates.',
  'Deep CRM integrations.',
  'Aggressive partner channel.',
  'Excellent mobile app.',
  'AI summaries of win/loss calls.',
];
const weaknesses = [
  'Slow support outside US hours.',
  'No SSO below the top tier.',
  'Dated UI; users complain about navigation.',
  'Weak permissions model.',
  'Expensive professional services.',
  'Small team, limited roadmap.',
];
const pricing = [
  'Per seat, $45/month list.',
  'Three tiers: $19 / $39 / $79 per user.',
  'Platform fee plus seats; discounts at year end.',
  'Free up to 3 users, then $12 per user.',
  'Usage-based, opaque overages.',
];
const general = [
  'Won two deals against us last quarter.',
  'Hiring in EMEA sales.',
  'Raised a Series B in spring.',
  'Watch their new analytics module.',
  '',
];

/** A small deterministic PRNG (mulberry32) so a seed run is reproducible. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(list: readonly T[], r: () => number): T => list[Math.floor(r() * list.length)] as T;

/** The n-th demo name; distinct for distinct n. */
export function demoName(n: number): string {
  const combos = prefixes.length * cores.length * suffixes.length;
  const k = n % combos;
  const base = `${prefixes[k % prefixes.length]}${cores[Math.floor(k / prefixes.length) % cores.length]} ${suffixes[Math.floor(k / (prefixes.length * cores.length))]}`;
  return n < combos ? base : `${base} ${Math.floor(n / combos) + 1}`;
}

export interface DemoCompetitorEvents {
  competitorId: string;
  name: string;
  /** CompetitorAdded then one CompetitorNoteUpdated per filled note column, as commands would produce. */
  competitorEvents: NewEvent[];
  nameClaim: NewEvent;
}

export function demoCompetitorEvents(n: number, competitorId: string, r: () => number): DemoCompetitorEvents {
  const name = demoName(n);
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
  const notes = {
    strengths: pick(strengths, r),
    weaknesses: pick(weaknesses, r),
    pricing: pick(pricing, r),
    general: pick(general, r),
  };
  const competitorEvents: NewEvent[] = [
    {
      type: 'CompetitorAdded',
      data: {
        competitorId,
        name,
        website: `https://${slug}.example.com`,
        segmentId: pick(defaultSegments, r).segmentId,
        threat: pick(threats, r),
        headquarters: pick(cities, r),
      },
    },
  ];
  for (const column of noteColumns) {
    if (notes[column]) {
      competitorEvents.push({
        type: 'CompetitorNoteUpdated',
        data: { competitorId, column, value: notes[column], noteVersion: 1 },
      });
    }
  }
  return {
    competitorId,
    name,
    competitorEvents,
    nameClaim: { type: 'CompetitorNameClaimed', data: { name, competitorId } },
  };
}
