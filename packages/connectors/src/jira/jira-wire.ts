import { z } from 'zod';

/** Jira's issue keys: project key, dash, number (`SUP-4470`). The ticket argument of every Jira tool. */
export const issueKeySchema = z
  .string()
  .regex(/^[A-Z][A-Z0-9_]*-[1-9][0-9]*$/, 'a Jira issue key like SUP-4470');

/** 201 of `POST /rest/api/3/issue`. */
export const createdIssueSchema = z.object({ id: z.string(), key: z.string(), self: z.string() });
export type CreatedIssue = z.infer<typeof createdIssueSchema>;

const statusSchema = z.object({
  name: z.string(),
  statusCategory: z.object({ key: z.string() }),
});

/** An issue as read with `fields=status,labels`. */
export const issueSchema = z.object({
  id: z.string(),
  key: z.string(),
  fields: z.object({ status: statusSchema, labels: z.array(z.string()).default([]) }),
});
export type JiraIssue = z.infer<typeof issueSchema>;

/** `GET /rest/api/3/issue/{key}/transitions`. */
export const transitionsSchema = z.object({
  transitions: z.array(z.object({ id: z.string(), name: z.string(), to: statusSchema })),
});
export type JiraTransition = z.infer<typeof transitionsSchema>['transitions'][number];

/** One page of `POST /rest/api/3/search/jql`. */
export const searchPageSchema = z.object({
  issues: z.array(
    z.object({
      id: z.string(),
      key: z.string(),
      fields: z.object({ status: statusSchema.optional() }).optional(),
    }),
  ),
  nextPageToken: z.string().nullish(),
  isLast: z.boolean().optional(),
});

/** The status category Jira gives every "done" status, whatever the workflow names it. */
export const DONE_CATEGORY = 'done';

/** 204 answers: no body. */
export const noContent = z.undefined();
