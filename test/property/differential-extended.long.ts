/** @module differential-extended.long — the long differential runs on the extended venue (differential-long.ts). */
import { describeLongDifferential } from './differential-long.ts';

describeLongDifferential('extended venue');
