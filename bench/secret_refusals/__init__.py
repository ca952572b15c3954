"""False secret refusals on CRM text with identifiers, and card numbers in their real layouts."""
