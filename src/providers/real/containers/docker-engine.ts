// How commands reach a Docker engine: the host's (`docker` on PATH, DOCKER_HOST as the user set it), or one
// a cluster started for itself (private-docker.ts).
export interface DockerEngine {
  /** argv prefix of the docker CLI for this engine. */
  readonly docker: readonly string[];
  /** Environment for programs that run docker themselves (kind): DOCKER_HOST, and PATH with its docker first. */
  readonly env: Readonly<Record<string, string>>;
  /** argv prefix that runs a command where the engine's published ports are (empty: here). */
  readonly enter: readonly string[];
}

export const HOST_DOCKER: DockerEngine = { docker: ['docker'], env: {}, enter: [] };
