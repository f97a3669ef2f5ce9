"""What the tests share: the sandbox fixtures, a token helper, raw HTTP views of a site, content-bound sites."""
