import type { Threat } from '#events/competitor/fields.ts';

export interface DemoCompetitor {
  name: string;
  website: string;
  segmentId: string;
  threat: Threat;
  headquarters: string;
  notes: { strengths: string; weaknesses: string; pricing: string; general: string };
}

/** The handful of competitors a fresh install shows, so the product is not empty on first look. */
export const demoCompetitors: DemoCompetitor[] = [
  {
    name: 'Northwind Analytics',
    website: 'https://northwind.example.com',
    segmentId: 'enterprise',
    threat: 'high',
    headquarters: 'Seattle, USA',
    notes: {
      strengths: 'Deep Salesforce integration; strong brand with CIOs.',
      weaknesses: 'Slow onboarding (8–12 weeks); dated UI.',
      pricing: 'Per seat, $65/month list; heavy discounting at year end.',
      general: 'Won the Contoso renewal in Q2 on bundled services.',
    },
  },
  {
    name: 'Brightlane',
    website: 'https://brightlane.example.io',
    segmentId: 'mid-market',
    threat: 'medium',
    headquarters: 'Austin, USA',
    notes: {
      strengths: 'Fast setup, good templates.',
      weaknesses: 'No SSO below the top tier.',
      pricing: 'Three tiers: $19 / $39 / $79 per user per month.',
      general: '',
    },
  },
  {
    name: 'Kestrel Labs',
    website: 'https://kestrel.example.dev',
    segmentId: 'emerging',
    threat: 'low',
    headquarters: 'Berlin, Germany',
    notes: {
      strengths: 'AI summaries of win/loss calls.',
      weaknesses: 'Tiny team, seed funded.',
      pricing: '',
      general: '',
    },
  },
  {
    name: 'Acme Insight',
    website: 'https://acme-insight.example.com',
    segmentId: 'smb',
    threat: 'medium',
    headquarters: 'Toronto, Canada',
    notes: {
      strengths: 'Cheap; self-serve.',
      weaknesses: 'Weak permissions model.',
      pricing: 'Free up to 3 users.',
      general: '',
    },
  },
  {
    name: 'Helix Compete',
    website: 'https://helix.example.net',
    segmentId: 'enterprise',
    threat: 'high',
    headquarters: 'London, UK',
    notes: {
      strengths: 'Battlecards with approval workflows.',
      weaknesses: 'Expensive professional services.',
      pricing: 'Platform fee $40k/year plus seats.',
      general: 'Hiring aggressively in EMEA sales.',
    },
  },
  {
    name: 'Orbit CI',
    website: 'https://orbitci.example.org',
    segmentId: 'mid-market',
    threat: 'low',
    headquarters: 'Dublin, Ireland',
    notes: { strengths: '', weaknesses: '', pricing: '', general: 'Pivoting from CI tooling; watch.' },
  },
];
