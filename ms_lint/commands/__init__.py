"""Sub-commands of the CLI. Each module exposes ``register(subparsers)``, which sets ``handler`` on its parser."""
