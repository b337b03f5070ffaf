/**
 * kafkajs as walbox loads it: every value walbox takes from kafkajs comes through this module (lint enforces
 * it), so that the faster partition grouping is in place before kafkajs's producer loads and keeps kafkajs's
 * own (docs/development.md, "Decisions"). Types may come from 'kafkajs' directly.
 */
import { speedUpPartitionGrouping } from './speedUpPartitionGrouping.js';

speedUpPartitionGrouping();

export * from 'kafkajs';
