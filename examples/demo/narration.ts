/** How the demo talks: numbered acts in bold, the harness's answers indented under them. */
const BOLD = '\x1b[1m';
const DIM = '\x1b[2m';
const RESET = '\x1b[0m';
const styled = process.stdout.isTTY === true;

export const say = (line = ''): void => console.log(line);
export const heading = (text: string): void => say(styled ? `\n${BOLD}${text}${RESET}` : `\n${text}`);
export const act = (n: number, text: string): void => heading(`${n}. ${text}`);
export const answer = (text: string): void => say(`   → ${text}`);
export const aside = (text: string): void => say(styled ? `     ${DIM}${text}${RESET}` : `     ${text}`);
