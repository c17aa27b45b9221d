// A node's state as `netrepro capture` read it, carried in the scenario so that a scenario and its state move
// together: the netns lab restores it verbatim on that node instead of rendering kube-proxy's rules (docs/import.md).
import { z } from 'zod';
import { Name } from './primitives.ts';

export const CapturedState = z
  .object({
    iptables: z
      .string()
      .min(1)
      .optional()
      .describe(
        "the node's `iptables-save -c` as captured (every table, chain, policy and rule): the lab restores it with iptables-restore, counters zeroed, in place of the rules its components would write",
      ),
    state: z
      .string()
      .regex(/^(?!\/)(?!.*(^|\/)\.\.(\/|$)).+$/, 'a directory relative to the scenario file, inside its folder')
      .optional()
      .describe(
        "instead of `iptables` inline: a directory, relative to the scenario file, holding the node's iptables-save.txt (and conntrack.txt) as the bundle had them, read when the scenario loads (netrepro import writes it when the state is too large to carry inline); move it with the file",
      ),
    brNetfilter: z
      .boolean()
      .describe(
        'br_netfilter was loaded: false restores the module absent the way the lab emulates it per namespace (net.bridge.bridge-nf-call-iptables 0)',
      ),
    routes: z
      .array(z.string().min(1))
      .default([])
      .describe(
        "`ip route add` arguments of every captured route but the kernel's own (those of the node's addresses): they replace the routes the lab made (its default route, its routes to the other nodes' pods)",
      ),
    rules: z
      .array(z.string().min(1))
      .default([])
      .describe("`ip rule add` arguments of the captured policy rules beyond the kernel's three"),
    conntrack: z
      .array(z.string().min(1))
      .default([])
      .describe(
        '`conntrack -L -o extended` lines as captured (TCP and UDP): each is recreated with `conntrack -I` in the node namespace before the first probe',
      ),
    neighbours: z
      .array(
        z.string().regex(/^\d+\.\d+\.\d+\.\d+ lladdr [0-9a-f:]{17} dev \S+ nud (permanent|noarp|reachable|stale)$/),
      )
      .default([])
      .describe(
        "`ip neigh replace` arguments of the captured neighbour entries for pod addresses no pod of the replay holds (a deleted pod's): restored as captured, so the node still sends to the gone pod's last MAC; the replay's own pods get theirs anew",
      ),
  })
  .strict()
  .refine((c) => (c.iptables === undefined) !== (c.state === undefined), {
    message: 'the captured rules are inline (`iptables`) or in a state directory (`state`), one of them',
    path: ['iptables'],
  })
  .describe("the node's captured state (netrepro import writes it): restored verbatim after the lab built its network");

export const NotReplayed = z
  .object({
    node: Name.optional().describe('the node it was seen on; none for the cluster as a whole'),
    what: z.string().min(1).describe('what the capture holds'),
    why: z.string().min(1).describe('why the lab cannot restore it'),
  })
  .strict();

export type CapturedStateSpec = z.output<typeof CapturedState>;
export type NotReplayedSpec = z.output<typeof NotReplayed>;
