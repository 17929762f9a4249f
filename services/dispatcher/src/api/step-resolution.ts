/** Which step a call belongs to: core's `resolveStep` (its rules live there, with the intake's). */
export { resolveStep, type ResolutionInput, type StepResolution } from '@agent-saga/core';
