/*
  Subscribes a connection to the table's NOTIFY channel (the table name as
  configured, quoted as one identifier).

  Input:
    none
  Output:
    none
*/
LISTEN {{channel}}
