/** Commit approval: plans waiting for a person's decision, with a timeout and socket announcements. */
export { createApprovals, type ApprovalDecision, type Approvals, type ApprovalsOptions } from './approvals.ts';
