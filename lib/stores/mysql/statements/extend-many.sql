/*
 * Extends many plain locks in one statement, as extend.sql each
 * (owner-checked, a live lease, ttl from now on the database clock). The
 * caller sends the locks in name order and the join walks them in that order
 * (STRAIGHT_JOIN), so two batches take their row locks in one order. MySQL
 * has no RETURNING: the answer is the count of rows extended; when it is
 * short of the locks sent, the caller asks extend.sql for each (extending a
 * live lease again is harmless) to learn which.
 * Input:
 *   ? the locks, a JSON array of {"k": name, "o": owner, "t": ttl in microseconds}
 * Output: affected rows, the locks extended.
 */
UPDATE JSON_TABLE(?, '$[*]' COLUMNS (
    name VARCHAR(2000) CHARACTER SET utf8mb4 PATH '$.k',
    owner VARCHAR(1000) CHARACTER SET utf8mb4 PATH '$.o',
    ttl BIGINT PATH '$.t'
  )) j
  STRAIGHT_JOIN {{locks}} l ON l.name = CAST(j.name AS BINARY) AND l.owner = CAST(j.owner AS BINARY)
SET l.expires_at = UTC_TIMESTAMP(6) + INTERVAL j.ttl MICROSECOND
WHERE l.expires_at > UTC_TIMESTAMP(6)
