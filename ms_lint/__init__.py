"""ms-lint: find what makes MindSpore graph compilation slow or fail, rewrite it, prove the rewrite."""

__version__ = "0.1.0"
