package postgres

// LockID exposes the advisory lock id of key to the tests.
func LockID(s *Store, key string) int64 {
	id, _ := s.lockID(key)
	return id
}
