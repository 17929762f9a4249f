/** An Atlassian Document Format document, as Jira Cloud REST v3 requires for descriptions and comments. */
export interface AdfDocument {
  readonly type: 'doc';
  readonly version: 1;
  readonly content: readonly AdfParagraph[];
}

interface AdfParagraph {
  readonly type: 'paragraph';
  readonly content: readonly { readonly type: 'text'; readonly text: string }[];
}

/** A document of one paragraph per non-empty line of `text`. */
export function adfFromText(text: string): AdfDocument {
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trimEnd())
    .filter((l) => l !== '');
  return {
    type: 'doc',
    version: 1,
    content: lines.map((line) => ({ type: 'paragraph', content: [{ type: 'text', text: line }] })),
  };
}
