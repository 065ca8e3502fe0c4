"""What the kit writes for people: feedback pages, the class page, CSVs, and text made safe to show."""
