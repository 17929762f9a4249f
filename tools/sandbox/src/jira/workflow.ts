/**
 * The sandbox project's workflow: four statuses in Jira's three status categories, and one global
 * transition into each status (named after it, as Jira's simplified workflows do), offered from every
 * other status. A new issue starts in `To Do`; `Draft` is a status in the "To Do" category that the team's
 * queue filters out, so a ticket moved there is invisible to the team until opened.
 */

export const StatusCategoryKey = {
  NEW: 'new',
  INDETERMINATE: 'indeterminate',
  DONE: 'done',
} as const;
export type StatusCategoryKey = (typeof StatusCategoryKey)[keyof typeof StatusCategoryKey];

export const JiraStatusName = {
  DRAFT: 'Draft',
  TO_DO: 'To Do',
  IN_PROGRESS: 'In Progress',
  DONE: 'Done',
} as const;
export type JiraStatusName = (typeof JiraStatusName)[keyof typeof JiraStatusName];

/** Jira's own ids, keys, names and colours of the three status categories. */
export const STATUS_CATEGORIES: Readonly<
  Record<StatusCategoryKey, { id: number; name: string; colorName: string }>
> = {
  new: { id: 2, name: 'To Do', colorName: 'blue-gray' },
  indeterminate: { id: 4, name: 'In Progress', colorName: 'yellow' },
  done: { id: 3, name: 'Done', colorName: 'green' },
};

export interface StatusDef {
  readonly id: string;
  readonly name: JiraStatusName;
  readonly category: StatusCategoryKey;
}

export const STATUSES: readonly StatusDef[] = [
  { id: '10000', name: JiraStatusName.DRAFT, category: StatusCategoryKey.NEW },
  { id: '10001', name: JiraStatusName.TO_DO, category: StatusCategoryKey.NEW },
  { id: '3', name: JiraStatusName.IN_PROGRESS, category: StatusCategoryKey.INDETERMINATE },
  { id: '10002', name: JiraStatusName.DONE, category: StatusCategoryKey.DONE },
];

export const INITIAL_STATUS: JiraStatusName = JiraStatusName.TO_DO;

export interface TransitionDef {
  readonly id: string;
  readonly name: string;
  readonly to: JiraStatusName;
}

const TRANSITIONS: readonly TransitionDef[] = [
  { id: '11', name: 'To Do', to: JiraStatusName.TO_DO },
  { id: '21', name: 'In Progress', to: JiraStatusName.IN_PROGRESS },
  { id: '31', name: 'Done', to: JiraStatusName.DONE },
  { id: '41', name: 'Draft', to: JiraStatusName.DRAFT },
];

export function statusDef(name: JiraStatusName): StatusDef {
  const def = STATUSES.find((s) => s.name === name);
  if (def === undefined) throw new Error(`unknown status ${name}`);
  return def;
}

/** The transitions offered from `status`: every global transition except the one into `status` itself. */
export function availableTransitions(status: JiraStatusName): readonly TransitionDef[] {
  return TRANSITIONS.filter((t) => t.to !== status);
}

/** Jira's wire shape of a status, with its category. */
export function statusWire(name: JiraStatusName, baseUrl: string): Record<string, unknown> {
  const def = statusDef(name);
  const category = STATUS_CATEGORIES[def.category];
  return {
    self: `${baseUrl}/rest/api/3/status/${def.id}`,
    description: '',
    iconUrl: `${baseUrl}/images/icons/statuses/generic.png`,
    name: def.name,
    id: def.id,
    statusCategory: {
      self: `${baseUrl}/rest/api/3/statuscategory/${category.id}`,
      id: category.id,
      key: def.category,
      colorName: category.colorName,
      name: category.name,
    },
  };
}
