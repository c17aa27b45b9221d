// What differs from one lab run to the next, replaced by N in a lab example's block so that
// regenerating the README changes a block only when what netrepro prints changed:
//   - durations ("in 594 ms", "(1.57 s)", "at 11.2 ms"); in a column (after two or more spaces) N
//     keeps the column's width, so tables stay aligned;
//   - the port the kernel picked for a client's TCP connection: the source of a packet it sent
//     (`tcp 10.244.1.2:42562 > ...`) and what the server saw (`the server saw the client as
//     10.244.1.2:55692`); a UDP probe's port is the scenario's own choice and stays;
//   - how far a cut download got ("after 1504286 of 20000000 bytes").
// Everything else is printed as the run printed it. Examples without a lab are never normalised.

const DURATION = /( {2,})?\b\d+(?:\.\d+)?( ?)(ms|s)\b/g;
const TCP_SOURCE_PORT = /\btcp (\d{1,3}(?:\.\d{1,3}){3}):\d+ > /g;
const CLIENT_AS_SEEN = /\bthe server saw the client as (\d{1,3}(?:\.\d{1,3}){3}):\d+/g;
const CUT_DOWNLOAD = /\bafter \d+ of (\d+) bytes\b/g;

export function normaliseLabOutput(text: string): string {
  return text
    .replace(DURATION, (match: string, column: string | undefined, space: string, unit: string) =>
      column ? `N${space}${unit}`.padStart(match.length) : `N${space}${unit}`,
    )
    .replace(TCP_SOURCE_PORT, 'tcp $1:N > ')
    .replace(CLIENT_AS_SEEN, 'the server saw the client as $1:N')
    .replace(CUT_DOWNLOAD, 'after N of $1 bytes');
}
