"""What a skill is made of: text, files, frontmatter, Markdown, the model."""
