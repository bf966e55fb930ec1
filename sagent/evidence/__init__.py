"""Sessions as evidence: sealed handoffs between agents (`capsules`), the generation parameters of each
model request (`manifest`), checking a tree of session logs (`verify`), and reading them back (`recall`,
`compare`, `trace`)."""
