// Provider names alone, for the command line's choices: importing them loads no provider.
export const PROVIDER_NAMES = ['netns', 'local', 'kind', 'minikube', 'k3s'] as const;
