/*
  A round trip that proves a connection alive (the LISTEN connection's check).

  Input:
    none
  Output:
    one row
*/
SELECT 1
