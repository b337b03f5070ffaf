/**
 * kafkajs as walbox loads it: every value walbox takes from kafkajs comes through this module (lint enforces
 * it), so that the faster partition grouping, produce request and request framing are in place before the
 * kafkajs modules that would keep kafkajs's own load (docs/development.md, "Decisions"). Types may come from
 * 'kafkajs' directly.
 */
import { speedUpPartitionGrouping } from './speedUpPartitionGrouping.js';
import { speedUpProduceRequest } from './speedUpProduceRequest.js';
import { speedUpRequestFraming } from './speedUpRequestFraming.js';

speedUpPartitionGrouping();
speedUpProduceRequest();
speedUpRequestFraming();

export * from 'kafkajs';
