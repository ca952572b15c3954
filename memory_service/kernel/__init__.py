"""What every slice shares: names, errors, units of work, scoping, paging, ports."""
