struct queue {
  int data;
  int finished;
  int late;
};

int queue_ready(const struct queue *q);
