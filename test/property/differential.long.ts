/** @module differential.long — the long differential runs on the default venue (differential-long.ts). */
import { describeLongDifferential } from './differential-long.ts';

describeLongDifferential('default venue');
