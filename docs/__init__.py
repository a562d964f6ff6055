"""The repository's documentation: the site's pages, and (``docs.tools``) the tooling that checks them."""
