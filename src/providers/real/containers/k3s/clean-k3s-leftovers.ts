// k3s containers (and tcpdump/conntrack helpers of every provider) carry netrepro.io/run; testcontainers'
// reaper usually removes them when the process dies, this catches the rest.
export { cleanDockerLeftovers as cleanK3sLeftovers } from '../clean-docker-leftovers.ts';
