#include <stdlib.h>
#include <string.h>
int main(void){
  char *a = malloc(1500000); memset(a,1,1500000);
  for (int i=0;i<10;i++){ char *t=malloc(100); t[0]=1; free(t);} 
  char *l = malloc(1000); l[0]=1;
  free(a);
  return 0;
}
